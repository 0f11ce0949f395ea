# id: ex06-daemon-idle-slots
# category: exit
# effect: host side: silent and one-byte-a-second connections hold every slot of a real daemon (the column's profile); a real client must still be served, an idle established one keep its session
# touches_os: no
# destructive: no
# fast: yes
# then: daemon-slots
pass
