# id: fr18-import-stl
# category: file-read
# effect: import an STL file from $HOME with build123d.import_stl
# touches_os: yes
# destructive: no
# fast: no
mesh = import_stl("{SECRET_STL}")
print(mesh.bounding_box())
