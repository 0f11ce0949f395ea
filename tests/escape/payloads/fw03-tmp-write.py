# id: fw03-tmp-write
# category: file-write
# effect: drop a file in /tmp
# touches_os: yes
# destructive: no
# fast: no
open("/tmp/{MARK}-dropped", "w").write("pwned")
