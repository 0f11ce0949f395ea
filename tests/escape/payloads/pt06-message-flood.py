# id: pt06-message-flood
# category: protocol
# effect: flood the launcher with 100000 small well-formed messages of the wrong type
# touches_os: no
# destructive: no
# fast: yes
import os, struct
body = b'{"t":"next_exit","signal":"SIGKILL"}'
msg = b"E" + struct.pack(">I", len(body)) + body
for i in range(100000):
    os.write(3, msg)
