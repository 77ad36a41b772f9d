from factsheet.cli import main

main()
