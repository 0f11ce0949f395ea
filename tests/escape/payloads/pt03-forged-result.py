# id: pt03-forged-result
# category: protocol
# effect: forge a reply: a well-formed result claiming success with huge objects
# touches_os: no
# destructive: no
# fast: no
import os, json, struct
body = json.dumps({"t": "result", "ok": True, "stdout": "forged", "objects": [{"name": "x" * 100}] * 100000}).encode()
data = struct.pack(">I", len(body)) + body
parts = [data[i:i + 32768] for i in range(0, len(data), 32768)]
for i, p in enumerate(parts):
    os.write(3, (b"M" if i < len(parts) - 1 else b"E") + p)
import time
time.sleep(1)
