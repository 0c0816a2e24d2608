"""The smallest Streamlit baseline for bench_browser: one slider and one line of text, no figures."""

import streamlit as st

value = st.slider("value", 0, 100, 0, key="slider.value")
st.write(f"value is {value}")
