# id: re04-cpu-loop
# category: resource
# effect: busy loop forever
# touches_os: no
# destructive: no
# fast: yes
while True:
    pass
