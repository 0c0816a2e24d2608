from playground.ui.page import home_page

home_page()
