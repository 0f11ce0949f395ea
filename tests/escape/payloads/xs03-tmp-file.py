# id: xs03-tmp-file
# category: cross-session
# effect: read another session's file in /tmp
# touches_os: yes
# destructive: no
# fast: no
print(open("{TMP_SECRET}").read())
