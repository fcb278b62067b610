"""What the settings of every member share; it imports no other member.

- ``defaults``: the stack's ports, database and the URLs made of them;
- ``loading``: settings from the environment, errors naming the variable set;
- ``fields``: reference-stack aliases and the URL field types;
- ``tokens``: a bearer token given as a string or as a file, not both.
"""
