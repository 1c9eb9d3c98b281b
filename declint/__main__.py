from declint.cli import main

main()
