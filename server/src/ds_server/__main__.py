from ds_server.cli import main

main()
