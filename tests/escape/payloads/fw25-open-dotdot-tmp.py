# id: fw25-open-dotdot-tmp
# category: file-write
# effect: open() for writing a relative name that climbs out of the working directory into /tmp
# touches_os: yes
# destructive: no
# fast: no
with open("../" * 16 + "tmp/{MARK}.txt", "w") as f:
    f.write("escaped")
