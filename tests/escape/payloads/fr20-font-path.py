# id: fr20-font-path
# category: file-read
# effect: make OCCT's font loader open the secret (Text(font_path=...))
# touches_os: yes
# destructive: no
# fast: no
for p in ("{SECRET}", "/etc/shadow"):
    try:
        t = Text("A", 10, font_path=p)
        print(p, t.bounding_box())
    except Exception as e:
        print(p, repr(e))
