# id: fr36-mesher-read-secret-stl
# category: file-read
# effect: Mesher().read and import_stl of the $HOME STL secret (the secret number shows in the bounding box)
# touches_os: yes
# destructive: no
# fast: no
try:
    print(Mesher().read("{SECRET_STL}")[0].bounding_box())
finally:
    print(import_stl("{SECRET_STL}").bounding_box())
