"""What a grade tells people: the document and terminal table, pictures, HTML, and the machine
formats (JUnit, Gradescope, Classroom, gradebook) in ``formats/``.
"""
