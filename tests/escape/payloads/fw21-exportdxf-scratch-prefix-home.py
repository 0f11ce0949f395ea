# id: fw21-exportdxf-scratch-prefix-home
# category: file-write
# effect: ExportDXF.write to /scratch/.. + a $HOME path (a name that starts in the scratch directory and leaves it)
# touches_os: yes
# destructive: no
# fast: no
dxf = ExportDXF()
dxf.add_shape(Rectangle(1, 1))
dxf.write("/scratch/.." + "{SECRET_DIR}/{MARK}.dxf")
