USERS = {1: "ada", 2: "linus"}


def get_user(user_id):
    return USERS.get(user_id)
