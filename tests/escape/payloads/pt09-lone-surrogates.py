# id: pt09-lone-surrogates
# category: protocol
# effect: forge a successful result whose stdout, stderr and object names hold lone surrogates (not encodable as UTF-8)
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
reply('{"t":"result","ok":true,"stdout":"a\\ud800b","stderr":"\\udfff","objects":[{"name":"n\\udc80","type":"int"}]}')
