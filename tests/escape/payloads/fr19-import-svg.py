# id: fr19-import-svg
# category: file-read
# effect: import an SVG file from $HOME with build123d.import_svg
# touches_os: yes
# destructive: no
# fast: no
shapes = import_svg("{SECRET_SVG}")
print([s.bounding_box() for s in shapes])
