def paginate(items, page, size):
    raise NotImplementedError
