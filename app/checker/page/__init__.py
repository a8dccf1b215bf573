"""The "Check a deployment" page's parts (Streamlit): which server a check goes to (servers), the
model and options (controls), and the report with its progress bar (report), which lesson 7 and
the exercises page also draw. The page itself is app/views/check.py."""
