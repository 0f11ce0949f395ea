# id: re02-memory-huge
# category: resource
# effect: one 10 TB allocation
# touches_os: yes
# destructive: yes
# fast: yes
b = bytearray(10 ** 13)
