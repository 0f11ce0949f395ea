# id: pt16-escapes-grow-output
# category: protocol
# effect: forge a result whose stdout is 40,000 escaped control characters (escaping makes text 4x longer)
# touches_os: no
# destructive: no
# fast: no
import os, struct
def reply(text):
    body = text.encode() if isinstance(text, str) else text
    data = struct.pack(">I", len(body)) + body
    parts = [data[i:i + 32768] for i in range(0, len(data), 32768)] or [b""]
    for i, p in enumerate(parts):
        os.write(3, (b"M" if i < len(parts) - 1 else b"E") + p)
reply('{"t":"result","ok":true,"stdout":"' + '\\u0001' * 40000 + '"}')
