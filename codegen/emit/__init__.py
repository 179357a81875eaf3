"""Programs to C sources: the C printer, the functions' layout (parts, scratch slots, the column
loops), and the sources rendered from templates/ through Jinja2.
"""
