# id: fw18-scratch-dotdot-export-stl
# category: file-write
# effect: export_stl from the scratch directory up through .. into $HOME (real exporter when the Python layers are off)
# touches_os: yes
# destructive: no
# fast: no
export_stl(Box(1, 1, 1), "../" * 16 + "{SECRET_DIR}/{MARK}.stl".lstrip("/"))
