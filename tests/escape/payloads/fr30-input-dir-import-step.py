# id: fr30-input-dir-import-step
# category: file-read
# effect: import a STEP file from the input directory with build123d.import_step instead of import_file
# touches_os: yes
# destructive: no
# fast: no
part = import_step("{INDIR_STEP}")
print(part.bounding_box())
