"""A check's result written out: the JSON report and its schema (report.py, report_schema.py, schemas/),
JUnit XML (junit.py), and the failing sessions or streams as perf_analyzer's --input-data JSON
(export.py, stream_export.py). Pure: a result in, a document out.

Nothing is re-exported here: app.checker.engine exports what callers outside the engine use (its
report_schema namespace among them, for `report_schema.validate`).
"""
