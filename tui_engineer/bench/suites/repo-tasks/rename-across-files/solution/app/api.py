from app.users import get_user


def handle(user_id):
    name = get_user(user_id)
    return {"status": 404} if name is None else {"status": 200, "name": name}
