from app.users import get_usr


def handle(user_id):
    name = get_usr(user_id)
    return {"status": 404} if name is None else {"status": 200, "name": name}
