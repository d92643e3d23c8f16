USERS = {1: "ada", 2: "linus"}


def get_usr(user_id):
    return USERS.get(user_id)
