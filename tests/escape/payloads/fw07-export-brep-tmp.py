# id: fw07-export-brep-tmp
# category: file-write
# effect: export_brep into /tmp
# touches_os: yes
# destructive: no
# fast: no
export_brep(Box(1, 1, 1), "/tmp/{MARK}.brep")
