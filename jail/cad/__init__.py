"""The CAD workload in the jail.

* one ``execute`` call: runner, with capture (bounded output), error_report, partial (SIGUSR2),
  summary, changes, names, history, hints;
* the Python layers: policy (layer 7, the AST check) and safe_builtins (layer 8);
* one module per CAD service, each with its ``op_*`` or entry point: render (steps in render_*),
  measure, importer (parsers in readers), serialize, api.
"""
