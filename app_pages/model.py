from playground.ui.model_page import model_page

model_page()
