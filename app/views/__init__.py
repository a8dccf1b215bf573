"""The pages: one Streamlit script per page, run by st.navigation in app/main.py."""
