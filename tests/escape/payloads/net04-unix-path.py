# id: net04-unix-path
# category: network
# effect: connect to a unix socket in $HOME (a local agent/daemon)
# touches_os: yes
# destructive: no
# fast: no
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("{UNIX_PATH}")
