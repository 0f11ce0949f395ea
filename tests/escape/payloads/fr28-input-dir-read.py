# id: fr28-input-dir-read
# category: file-read
# effect: read a file in the launcher's input directory (import_file reads there; the jail must not)
# touches_os: yes
# destructive: no
# fast: no
print(open("{INDIR_SECRET}").read())
