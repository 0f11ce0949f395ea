# id: fw08-export-dxf-home
# category: file-write
# effect: ExportDXF.write into $HOME
# touches_os: yes
# destructive: no
# fast: no
e = ExportDXF()
e.add_shape(Circle(5).edges())
e.write("{SECRET_DIR}/{MARK}.dxf")
