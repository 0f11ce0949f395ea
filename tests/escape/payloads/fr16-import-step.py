# id: fr16-import-step
# category: file-read
# effect: import a STEP file from $HOME with build123d.import_step
# touches_os: yes
# destructive: no
# fast: no
part = import_step("{SECRET_STEP}")
print(part.bounding_box())
