package detect
