"""build123d-launcher: the trusted, unjailed side.

* ``launcher.mcp``       the MCP stdio server         * ``launcher.tools``     the tool table and ToolSet
* ``launcher.session``   one session's fork chain     * ``launcher.contain``   bounds kept from outside
* ``launcher.replies``   untrusted replies made safe  * ``launcher.files``     output and input files
* ``launcher.daemon``    the unix-socket daemon       * ``launcher.selftest``  audit, doctor, preflight

``launcher.core.Launcher`` ties them together; ``launcher.cli`` is the command line.
"""
__version__ = "0.1.0"
