from playground.ui.page import layer_page

layer_page("convolution")
