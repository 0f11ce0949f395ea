# id: fr17-import-brep
# category: file-read
# effect: import a BREP file from $HOME with build123d.import_brep
# touches_os: yes
# destructive: no
# fast: no
part = import_brep("{SECRET_BREP}")
print(part.bounding_box())
