# id: fr33-open-dotdot-secret
# category: file-read
# effect: open() the $HOME secret by a relative name that climbs out of the working directory
# touches_os: yes
# destructive: no
# fast: no
print(open("../" * 16 + "{SECRET}".lstrip("/")).read()[:200])
