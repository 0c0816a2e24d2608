from playground.ui.chain import chain_page
from playground.ui.page import home_page

home_page(chain_page)
