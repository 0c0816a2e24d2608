from playground.ui.chain import chain_page

chain_page()
