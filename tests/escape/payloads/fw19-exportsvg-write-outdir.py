# id: fw19-exportsvg-write-outdir
# category: file-write
# effect: ExportSVG.write straight into the output directory, bypassing the launcher's delivery
# touches_os: yes
# destructive: no
# fast: no
svg = ExportSVG()
svg.add_shape(Rectangle(1, 1))
svg.write("{OUTDIR}/{MARK}.svg")
