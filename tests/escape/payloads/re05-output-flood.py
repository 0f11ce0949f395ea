# id: re05-output-flood
# category: resource
# effect: print 200 MB
# touches_os: no
# destructive: no
# fast: yes
chunk = "A" * (1 << 20)
for i in range(200):
    print(chunk)
