# id: fw05-export-stl-home
# category: file-write
# effect: export_stl straight into $HOME
# touches_os: yes
# destructive: no
# fast: no
export_stl(Box(1, 1, 1), "{SECRET_DIR}/{MARK}.stl")
