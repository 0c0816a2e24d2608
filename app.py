"""Streamlit entry point: `streamlit run app.py`."""
import streamlit as st

st.set_page_config(page_title="TensorRT Layer Playground", page_icon="🧪", layout="wide")
st.title("TensorRT Layer Playground")
st.write("The pages arrive with the UI; the core is usable now: `python -m playground run convolution`.")
