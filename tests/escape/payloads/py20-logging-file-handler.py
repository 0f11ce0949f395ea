# id: py20-logging-file-handler
# category: file-write
# effect: logging.FileHandler / basicConfig(filename=) write a log file on the host
# touches_os: yes
# destructive: no
# fast: no
import logging
h = logging.FileHandler("/tmp/{MARK}-filehandler.log")
h.emit(logging.makeLogRecord({"msg": "written by the jail"}))
h.close()
print("ESCAPE-RESULT: escaped=host-log-file")
