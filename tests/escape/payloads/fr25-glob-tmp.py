# id: fr25-glob-tmp
# category: file-read
# effect: glob /tmp and /root for other users' files
# touches_os: yes
# destructive: no
# fast: no
import glob
print(glob.glob("/tmp/*/*")[:200], glob.glob("/root/*"), glob.glob("/home/*/*"))
