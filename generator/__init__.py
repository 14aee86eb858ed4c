"""The build pipeline.

scan -> parse -> graph -> chunk -> plan -> write -> render -> site, and embed -> index.
"""
