# id: fw06-export-step-outdir
# category: file-write
# effect: export_step straight into the output directory (bypassing the launcher)
# touches_os: yes
# destructive: no
# fast: no
export_step(Box(1, 1, 1), "{OUTDIR}/{MARK}.step")
