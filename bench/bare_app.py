"""The bare Streamlit baseline for bench_browser: one slider drawing two heatmaps (input and input × value),
nothing else; a change is drawn when the output's stats caption under them has changed."""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(layout="wide")
x = np.arange(54, dtype=np.float32).reshape(6, 9) % 9 + 1
value = st.slider("scale", 0.0, 4.0, 1.0, 0.01, key="bare.scale")
for which, t in (("input", x), ("output", x * value)):
    fig = go.Figure(go.Heatmap(z=t, texttemplate="%{z:.4g}"), layout=dict(title=which, width=420, height=320))
    st.plotly_chart(fig, key=f"bare.figure.{which}", width="content")
    st.caption(f"shape {t.shape} · min {t.min():.4g} · max {t.max():.4g}")
